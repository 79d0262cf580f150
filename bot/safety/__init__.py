"""Text and files from outside made safe: secrets masked (``redact``), control characters made inert for a
terminal (``inert``), files named on the command line read only when they are regular files (``local_files``),
text that is not Unicode text (lone surrogates) refused at each boundary (``text``)."""
