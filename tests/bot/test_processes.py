"""Telling a live owner from a dead one, also when a restarted process got the same pid."""

import os
import subprocess

from bot.process import liveness as processes


def test_this_process_is_alive():
    pid, started = processes.this_process()
    assert pid == str(os.getpid()) and started and not processes.gone(pid, started)


def test_an_ended_process_is_gone():
    child = subprocess.Popen(["true"])
    child.wait()
    assert processes.gone(str(child.pid))


def test_the_same_pid_with_another_start_time_is_a_different_process():
    pid, started = processes.this_process()
    assert processes.gone(pid, str(int(started) + 1))


def test_without_a_start_time_liveness_decides():
    assert not processes.gone(str(os.getpid()), "") and processes.gone("not-a-pid")
