"""The excepthook, the thread hook and the IPython extension, each in a fresh interpreter."""

from __future__ import annotations

import os
import subprocess
import sys

MAT1 = "expected mat1 and mat2 to have the same dtype, but got: c10::Half != c10::BFloat16"


def _python(code: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, NO_COLOR="1", LANG="en_US.UTF-8")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False)


def test_excepthook_prints_traceback_then_explanation() -> None:
    proc = _python(f"from dtypefix.cli.hook import install; install(); raise RuntimeError({MAT1!r})")
    assert proc.returncode == 1
    assert proc.stderr.index("Traceback (most recent call last)") < proc.stderr.index("DTF001")


def test_unknown_errors_get_only_the_normal_traceback() -> None:
    proc = _python("from dtypefix.cli.hook import install; install(); raise KeyError('x')")
    assert "KeyError" in proc.stderr and "dtypefix" not in proc.stderr


def test_thread_hook() -> None:
    code = (
        "import threading\nfrom dtypefix.cli.hook import install\ninstall()\n"
        f"def work():\n    raise RuntimeError({MAT1!r})\n"
        "t = threading.Thread(target=work); t.start(); t.join()\n"
    )
    proc = _python(code)
    assert proc.returncode == 0 and "DTF001" in proc.stderr


def test_uninstall_restores_hooks() -> None:
    code = (
        "import sys\nfrom dtypefix.cli.hook import install, uninstall\nbefore = sys.excepthook\n"
        "install(); assert sys.excepthook is not before\nuninstall(); assert sys.excepthook is before\n"
    )
    assert _python(code).returncode == 0


def test_ipython_extension() -> None:
    code = (
        "from IPython.core.interactiveshell import InteractiveShell\n"
        "ip = InteractiveShell.instance()\n"
        "ip.run_line_magic('load_ext', 'dtypefix.cli.ipython')\n"
        f"ip.run_cell({f'raise RuntimeError({MAT1!r})'!r})\n"
    )
    proc = _python(code)
    assert "DTF001" in proc.stdout, proc.stdout + proc.stderr


def test_api_import_is_light() -> None:
    code = (
        "import sys\nimport dtypefix.matcher, dtypefix.cli.hook\n"
        "heavy = {'torch', 'typer', 'rich', 'numpy', 'jsonschema', 'markdown_it'} & set(sys.modules)\n"
        "print(sorted(heavy))\n"
    )
    assert _python(code).stdout.strip() == "[]"
