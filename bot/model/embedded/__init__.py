"""The embedded model: llama.cpp's server run by the bot itself, for when no model endpoint is configured.

    weights   the model file: the default fetched once into the data folder and checked, or a GGUF of your own
    gguf      what a GGUF file's header says (name, architecture, context, attention shape)
    machine   threads and context size from the machine
    server    the server as a child process that never outlives the bot
    child     how a child of the bot (the server, pip fetching the model) never outlives it
    endpoint  when it is used, and the config the team then runs with
"""
