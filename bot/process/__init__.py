"""The process: how it stops (``lifecycle``), whether another process is alive (``liveness``), and how its log
lines look (``logs``)."""
