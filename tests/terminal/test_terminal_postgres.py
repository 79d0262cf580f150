"""A whole run from the terminal with the store in PostgreSQL (``[storage] url``): it is recorded there, listed
by ``history`` (which names the database without its password) and continued with ``--continue``."""

from tests.postgres_support import fresh_database
from tests.terminal.test_terminal import cli, script_team


async def test_a_run_recorded_in_postgresql_is_listed_shown_and_continued(model_server, postgres_cluster, tmp_path):
    url = await fresh_database(postgres_cluster)
    config = tmp_path / "config.toml"
    config.write_text(f'[llm]\nbase_url = "{model_server.base_url}"\nrequest_timeout_s = 5.0\nmax_retries = 1\n'
                      f'backoff_s = 0.01\n[storage]\nurl = "{url}"\n[sandbox]\nenabled = false\n')
    code, empty, _ = await cli(tmp_path, "history", config=config)
    assert code == 0 and empty.strip() == f"No runs yet in {url.replace(postgres_cluster.password, '***')}."
    script_team(model_server)
    code, out, err = await cli(tmp_path, "run", "find all intf keys", "--out", "result", config=config)
    assert code == 3, err  # the sandbox is disabled in this config: the run stops at the Tester, recorded
    run_id = out.split("Run ", 1)[1].split(" ", 1)[0]
    code, listing, _ = await cli(tmp_path, "history", config=config)
    assert code == 0 and run_id in listing and "find all intf keys" in listing
    code, transcript, _ = await cli(tmp_path, "history", run_id, config=config)
    assert code == 0 and "── planner" in transcript and "Status: error — The tests were not run" in transcript
    script_team(model_server)
    await cli(tmp_path, "run", "now make it async", "--continue", run_id, config=config)
    planner_prompt = model_server.calls("planner")[-1].body["messages"][1]["content"]
    assert "find all intf keys" in planner_prompt and "def find_intf" in planner_prompt
    assert not (tmp_path / ".local").exists()  # no SQLite file was made beside it
