"""The sandbox's own pytest plugin for a run of the team's Python tests: no ``conftest.py`` of theirs (nor anything
one loads or registers) may hook into how pytest collects, runs or reports tests.

``bot.sandbox.hollow`` refuses such files by their text before they run, but a name can be built at run time
(``globals()["pytest_runtest_" + "makereport"] = f``). This plugin judges what pytest actually registered: it is
part of the script that starts pytest (``python.PYTEST_THEN_EXIT``), so no file of the work dir provides it, and it
is handed to ``pytest.main`` as a plugin object. It checks every hook implementation pytest holds each time a
plugin is registered (a ``conftest.py`` is one, and so is anything it registers), right after that registration
and before the plugin's hooks are called; again when pytest's main starts and once collection has ended, before
any test runs (the outermost wrapper of each of those hooks). Every hook implementation
whose function was not written in pytest's own package is refused, but for the few that change no result
(``ALLOWED``); so is a ``collect_ignore`` list in a ``conftest.py``, and a change to the options that select tests
(``-k``, ``-m``, ``--deselect``, ``--ignore``, ``-x``) made after pytest read them. A refusal ends the process
before pytest writes its report, with one line saying why: the run is no pass.

The limit: code that knows this plugin can still reach it in memory (find it and unregister it, forge a
function's file name). What it stops is a hook switched on by any spelling at all.
"""

from __future__ import annotations

# Hooks a team's conftest.py may implement: they add markers, options and parameters, or a header line, and
# change neither which tests run nor how they are reported.
ALLOWED = ("pytest_configure", "pytest_addoption", "pytest_generate_tests", "pytest_make_parametrize_id",
           "pytest_report_header")
# pytest's options that select which tests run or stop the run early.
SELECTING = ("keyword", "markexpr", "deselect", "ignore", "ignore_glob", "maxfail", "collectonly")
REFUSED = "[sandbox] not a pass: "  # the start of the line a refusal prints

SOURCE = f'''
class SandboxGuard:
    def __init__(self):
        import _pytest
        self.stderr = os.dup(2)  # pytest captures fd 2 while it loads conftest.py files and collects
        self.own = tuple(os.path.dirname(os.path.realpath(m.__file__)) + os.sep for m in (_pytest, pytest))
        self.options = None
        self.pytests = {{}}  # file name -> whether it is pytest's own: asked of every hook at every registration

    def _pytests(self, name):
        if name not in self.pytests:
            self.pytests[name] = os.path.realpath(name).startswith(self.own)
        return self.pytests[name]

    def _written_here(self, function):
        code = getattr(function, "__code__", None)
        return code is not None and self._pytests(code.co_filename)

    def _named(self, plugin):
        where = getattr(plugin, "__file__", None) or type(plugin).__name__
        return where[len(os.getcwd()) + 1:] if where.startswith(os.getcwd() + os.sep) else where

    def _refuse(self, why):
        sys.stdout.flush()
        os.write(self.stderr, ("\\n{REFUSED}" + why + "; write plain test functions (fixtures, pytest_configure and "
                     "pytest_generate_tests are fine)\\n").encode())
        os._exit(3)

    def _selecting(self, config):
        return {{name: repr(getattr(config.option, name, None)) for name in {SELECTING!r}}}

    def _check_hooks(self, manager):
        for name in sorted(dir(manager.hook)):
            caller = getattr(manager.hook, name, None)
            if not name.startswith("pytest_") or name in {ALLOWED!r} or not hasattr(caller, "get_hookimpls"):
                continue
            for hook in caller.get_hookimpls():
                if hook.plugin is not self and not self._written_here(hook.function):
                    self._refuse(self._named(hook.plugin) + " implements " + name + ", which changes which tests "
                                 "pytest collects or runs, or how it reports them")
        for plugin in manager.get_plugins():
            if isinstance(plugin, type(os)) and not self._pytests(str(getattr(plugin, "__file__", ""))):
                for name in ("collect_ignore", "collect_ignore_glob"):
                    if getattr(plugin, name, None):
                        self._refuse(self._named(plugin) + " sets " + name + ", which hides test files from pytest")

    def _check(self, config):
        self._check_hooks(config.pluginmanager)
        if self.options is not None and self._selecting(config) != self.options:
            changed = sorted(k for k, v in self._selecting(config).items() if self.options[k] != v)
            self._refuse("pytest's options that select tests were changed while it ran (" + ", ".join(changed) + ")")

    def pytest_plugin_registered(self, plugin, manager):
        self._check_hooks(manager)

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_cmdline_main(self, config):
        self._check(config)
        self.options = self._selecting(config)
        yield

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_collection_modifyitems(self, config):
        self._check(config)
        yield
'''
