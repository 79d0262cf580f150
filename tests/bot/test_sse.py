"""The event-stream reader the model client reads replies with: events split anywhere by the network."""

import pytest

from bot.model.sse import MAX_LINE_BYTES, NotEvents, chunk_of, event_data


async def events(*parts: bytes) -> list[str]:
    async def chunks():
        for part in parts:
            yield part

    return [data async for data in event_data(chunks())]


async def test_each_events_data_in_order_up_to_done():
    assert await events(b'data: {"a": 1}\n\ndata: {"b": 2}\n\ndata: [DONE]\n\ndata: {"late": 3}\n\n') == [
        '{"a": 1}', '{"b": 2}']


@pytest.mark.parametrize("end", [b"\n", b"\r\n", b"\r"])
async def test_any_line_ending_the_standard_allows(end):
    stream = end.join([b"data: one", b"", b"data: two", b"", b""])
    assert await events(stream) == ["one", "two"]


async def test_an_event_split_anywhere_across_network_reads_is_read_whole():
    stream = 'data: {"text": "héllo"}\r\n\r\ndata: [DONE]\r\n\r\n'.encode()
    for cut in range(1, len(stream)):
        assert await events(stream[:cut], stream[cut:]) == ['{"text": "héllo"}'], cut
    assert await events(*(stream[i:i + 1] for i in range(len(stream)))) == ['{"text": "héllo"}']


async def test_comments_and_other_fields_are_skipped_and_data_lines_joined():
    stream = b": ping\n\nevent: message\nid: 7\nretry: 10\ndata: first\ndata:second\n\n"
    assert await events(stream) == ["first\nsecond"]


async def test_a_stream_cut_without_its_blank_line_still_ends_its_event():
    assert await events(b"data: one\n\ndata: two") == ["one", "two"]
    assert await events(b"data: one\n") == ["one"]


async def test_a_stream_without_line_ends_is_refused_at_the_bound():
    with pytest.raises(NotEvents, match="a line longer than"):
        await events(b"data: " + b"x" * MAX_LINE_BYTES, b"x" * 10)


def test_a_chunk_is_its_json_object_and_anything_else_is_no_chunk():
    assert chunk_of('{"choices": []}') == {"choices": []}
    assert chunk_of("[1, 2]") == {}
    with pytest.raises(NotEvents, match="a data line is not JSON"):
        chunk_of("{not json")
