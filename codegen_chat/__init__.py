"""The composition root: the ``codegen-chat`` commands, which build the real parts from the config and wire
the platform adapters to the core. It sits above everything: ``adapters/`` -> ``bot/`` -> ``agents/`` lie below
it, and ``bot/`` and ``adapters/`` never import it. Nothing imports this package; it imports everything it wires, at the
top of each module, so the import graph shows who depends on whom.

    __main__ the program (``codegen-chat``, ``python -m codegen_chat``): loads ``cli`` with the garbage collector
             paused, the one import made inside a function
    cli      the command line: run, history, doctor, sandbox, serve, eval
    serve    the chat platforms on one service
    web      the web chat alone (``codegen-chat web``)
    build    store, model, sandbox, publishers and the service, from the config and the environment
    eval_command  ``codegen-chat eval``: the model and sandbox for ``bot/eval``, the outcome printed
"""
