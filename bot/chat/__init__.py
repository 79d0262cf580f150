"""What a run looks like in a chat thread, the same on every platform; adapters only translate it.

    thread      ChatThread, Markup, ThreadStyle, ChatPlatform: what a platform adapter provides
    renderer    RunRenderer: a run's events drawn into a thread (the design overview is its docstring)
    words       the words a thread shows: headers, test results, statuses, the final summary
    split       long text in pieces that keep code blocks whole; the whole lines of a streaming turn
    long_code   the rule that turns long code blocks into attached files
"""
