"""What a run looks like in a chat thread, the same on every platform; adapters only translate it.

    thread      ChatThread, Markup, ThreadStyle, ChatPlatform: what a platform adapter provides
    renderer    RunRenderer: a run's events drawn into a thread (the design overview is its docstring)
    status      the status message at the top: progress, kept current, and the Stop control
    progress    where a run is: its steps, read from its events
    words       the words a thread shows: headers, test results, the final summary
    badges      lines meant for the workflow as a badge; the Check-In's README in two lines
    failures    the failing tests first, then the end of the output, on whole lines
    split       long text in pieces that keep code blocks whole; the whole lines of a streaming turn
    long_code   long code blocks as attached files, the rest captioned with their file
"""
