"""The wheel, tested as a user gets it.

Every other test runs on the editable install inside the checkout, where the
data files sit beside the code. Here the sdist and the wheel are built, the
wheel is installed into a fresh venv outside the checkout (no index: the
dependencies come from a wheelhouse collected through pip's cache), and every
documented command runs from a directory that is not the checkout.
"""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
from babel.support import Translations

from tests.conftest import run_in_pty
from dealerbox import __version__
from dealerbox.cli import main
from dealerbox.domain.messages import LANGUAGES
from dealerbox.rules.profiles import available_profiles

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 300
SHIPPED_TABLES = sorted(p.name for p in (ROOT / "firmware_config" / "tables").glob("*.toml"))


def sh(*argv, cwd, env=None, timeout=TIMEOUT, check=True):
    result = subprocess.run([str(a) for a in argv], cwd=cwd, env=env, capture_output=True, text=True,
                            timeout=timeout, stdin=subprocess.DEVNULL)
    if check and result.returncode != 0:
        pytest.fail(f"{' '.join(map(str, argv))} exited {result.returncode}\n{result.stdout}\n{result.stderr}")
    return result


def build(*args, outdir, source=ROOT):
    """``python -m build`` without isolation: the venv's setuptools, no download."""
    sh(sys.executable, "-m", "build", "--no-isolation", *args, "--outdir", outdir, source, cwd=outdir.parent)


def tree_copy(where: Path) -> Path:
    """The checkout's files as git sees them (tracked, and untracked but not ignored) copied to
    *where*: setuptools builds a wheel through the tree's ``build/`` and never empties it, so a
    module moved since a developer's last build would still ship from there."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, check=True, timeout=TIMEOUT).stdout
    for name in filter(None, listed.decode().split("\0")):
        source = ROOT / name
        if source.is_file():
            (where / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, where / name)
    return where


@pytest.fixture(scope="module")
def dist(tmp_path_factory):
    """(sdist, wheel built from that sdist, wheel built straight from the tree)."""
    top = tmp_path_factory.mktemp("dist")
    build(outdir=top / "dist")                      # the sdist, then the wheel from the sdist
    build("--wheel", outdir=top / "tree", source=tree_copy(top / "checkout"))
    (sdist,) = (top / "dist").glob("*.tar.gz")
    (wheel,) = (top / "dist").glob("*.whl")
    (tree_wheel,) = (top / "tree").glob("*.whl")
    return sdist, wheel, tree_wheel


@pytest.fixture(scope="module")
def wheelhouse(dist, tmp_path_factory):
    """Every wheel the install needs, collected once (pip's cache makes it quick)."""
    house = tmp_path_factory.mktemp("wheelhouse")
    sh(sys.executable, "-m", "pip", "wheel", "--quiet", "--wheel-dir", house, f"{dist[1]}[pi,tui]", cwd=house)
    return house


def fresh_venv(where: Path, wheelhouse: Path, requirement: str) -> Path:
    """A venv with only *requirement* installed from *wheelhouse*, no index."""
    sh(sys.executable, "-m", "venv", "--without-pip", where, cwd=where.parent)
    python = where / "bin" / "python"
    sh(sys.executable, "-m", "pip", "--python", python, "install", "--quiet", "--no-index",
       "--find-links", wheelhouse, requirement, cwd=where.parent)
    return where / "bin"


@pytest.fixture(scope="module")
def user(dist, wheelhouse, tmp_path_factory):
    """A user's machine: the wheel with the pi and tui extras in a fresh venv, a
    home of its own, and a working directory outside the checkout."""
    top = tmp_path_factory.mktemp("user")
    shutil.copy(dist[1], wheelhouse)
    bin_dir = fresh_venv(top / "venv", wheelhouse, "dealerbox[pi,tui]")
    (top / "work").mkdir()
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(top / "home"), "LANG": "C.UTF-8",
           "XDG_STATE_HOME": str(top / "home" / "state"), "TERM": "xterm-256color"}

    def run(*args, check=True, **kw):
        return sh(bin_dir / "dealerbox", *args, cwd=top / "work", env=env, check=check, **kw)

    run.bin, run.env, run.top = bin_dir, env, top
    return run


def names(archive) -> set[str]:
    return set(zipfile.ZipFile(archive).namelist())


def test_the_sdist_rebuilt_gives_the_same_wheel(dist):
    sdist, wheel, tree_wheel = dist
    assert names(wheel) == names(tree_wheel)
    with tarfile.open(sdist) as tar:
        inside = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    # A packager can build, test and install from the sdist alone.
    for needed in ("pyproject.toml", "Makefile", "MANIFEST.in", "systemd/install.sh", "systemd/lib.sh", "tests/test_wheel.py",
                   "firmware_config/tables/sim.toml", "docs/INSTALL.md"):
        assert needed in inside


def test_the_wheel_holds_every_module_and_data_file(dist):
    wheel = names(dist[1])
    for package in ("dealerbox", "hardware_sim"):
        for source in (ROOT / package).rglob("*.py"):
            assert source.relative_to(ROOT).as_posix() in wheel, f"{source} is not in the wheel"
    for data in (ROOT / "firmware_config").rglob("*"):
        if data.is_file() and data.suffix in (".toml", ".py", ".md"):
            assert f"dealerbox/{data.relative_to(ROOT).as_posix()}" in wheel, f"{data} is not in the wheel"
    assert "hardware_sim/demo_session.jsonl" in wheel
    for template in (ROOT / "dealerbox" / "floor" / "templates").iterdir():
        assert template.relative_to(ROOT).as_posix() in wheel, f"{template} is not in the wheel"
    assert not [n for n in wheel if n.startswith(("tests/", "bench/", "firmware_config/"))]


def test_the_wheel_holds_the_floors_catalogs_compiled(dist):
    """setup.py's build step compiles each .po into the wheel (no .mo is committed), from the
    tree and from the sdist alike; what it compiled is what gettext reads."""
    for archive in dist[1:]:
        wheel = names(archive)
        for lang in ("cs", "sk", "de"):
            compiled = f"dealerbox/floor/locale/{lang}/LC_MESSAGES/floor.mo"
            assert compiled in wheel, f"{compiled} is not in {archive.name}"
        with zipfile.ZipFile(archive) as z:
            czech = Translations(io.BytesIO(z.read("dealerbox/floor/locale/cs/LC_MESSAGES/floor.mo")), domain="floor")
        assert czech.gettext("Sign out") == "Odhlásit"
        assert [czech.ngettext("(%(count)s time, the last %(last)s)", "(%(count)s times, the last %(last)s)", n)
                .split()[1] for n in (1, 3, 5)] == ["případ,", "případy,", "případů,"]
    assert not list((ROOT / "dealerbox" / "floor" / "locale").rglob("*.mo")) or \
        "floor.mo" not in subprocess.run(["git", "ls-files", "dealerbox/floor/locale"], cwd=ROOT, capture_output=True,
                                         text=True, check=True).stdout


def test_version_says_where_the_data_comes_from(user):
    out = user("--version").stdout
    assert out.startswith(f"dealerbox {__version__}\n")
    site = str(user.top / "venv")
    for kind in ("profiles", "messages", "tables"):
        (line,) = [x for x in out.splitlines() if x.startswith(kind + ":")]
        assert line.split(":", 1)[1].strip().startswith(site), line
        assert str(ROOT) not in line


@pytest.mark.parametrize("profile", available_profiles())
def test_replay_each_profile_and_language(user, profile, capsys):
    session = ROOT / "hardware_sim" / "demo_session.jsonl"
    for lang in LANGUAGES:
        got = user("replay", session, "--profile", profile, "--lang", lang).stdout
        assert main(["replay", str(session), "--profile", profile, "--lang", lang]) == 0
        want = capsys.readouterr().out
        assert got == want and got.count("\n") > 5, (profile, lang)


def test_demo(user):
    out = user("demo").stdout
    assert "=== hand 1:" in out and "rule:" in out


@pytest.mark.parametrize("table", SHIPPED_TABLES)
def test_check_config_on_each_shipped_table(user, table):
    tables = Path(re.search(r"^tables:\s*(.+)$", user("--version").stdout, re.M).group(1))
    result = user("check-config", "--no-devices", tables / table)
    assert result.stdout + result.stderr == ""


def test_run_demo_then_history_and_journal_verify(user):
    """The run writes its journal to the user's state folder, not into the
    installed package; history and journal verify read it back."""
    out = user("run", "--demo", "--pace", "0").stdout
    m = re.search(r"demo over: (\d+) events journaled, (\d+) decisions", out)
    assert m and int(m.group(1)) > 100 and int(m.group(2)) > 5, out[-2000:]
    journal = Path(user.env["XDG_STATE_HOME"]) / "dealerbox" / "journal"
    assert list(journal.glob("journal-*.jsonl"))
    assert not list((user.top / "venv").rglob("journal-*.jsonl"))
    verify = user("journal", "verify", journal).stdout
    assert verify.startswith("journal ok:")
    history = json.loads(user("history", "--json").stdout)
    assert history["history_version"] == 1 and len(history["hands"]) >= 6


def test_sim_draws_on_a_terminal_and_stops_on_sigterm(user):
    state = user.top / "sim-state"
    run = run_in_pty([str(user.bin / "dealerbox"), "sim", "--state-dir", str(state)], until="LEDs",
                     cwd=user.top / "work", env=user.env)
    assert run.seen, run.text[-2000:]
    assert run.code == 0, run.text[-2000:]
    assert "session recorded in" in run.text
    assert list(state.glob("session-*.jsonl"))


def test_the_wheel_runs_from_a_zip(user, dist):
    """The wheel itself on sys.path (a zip): the data is read out of it."""
    env = {**user.env, "PYTHONPATH": str(dist[1])}
    out = sh(user.bin / "python", "-m", "dealerbox", "--version", cwd=user.top / "work", env=env).stdout
    assert str(user.top / "venv") not in out
    session = ROOT / "hardware_sim" / "demo_session.jsonl"
    replayed = sh(user.bin / "python", "-m", "dealerbox", "replay", session, "--profile", "cz-c40",
                  cwd=user.top / "work", env=env).stdout
    assert replayed == user("replay", session, "--profile", "cz-c40").stdout


def test_without_the_pi_extra_run_demo_refuses_in_one_line(dist, wheelhouse, tmp_path):
    bin_dir = fresh_venv(tmp_path / "venv", wheelhouse, str(dist[1]))
    result = sh(bin_dir / "dealerbox", "run", "--demo", "--pace", "0", cwd=tmp_path, check=False,
                env={"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(tmp_path), "LANG": "C.UTF-8"})
    assert result.returncode != 0
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and "'pi' extra" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


def test_make_dist_and_make_wheelhouse(dist, tmp_path):
    make = shutil.which("make") or pytest.skip("make is not installed")
    sh(make, "--no-print-directory", "dist", f"DIST={tmp_path / 'dist'}", cwd=ROOT)
    built = sorted(p.name for p in (tmp_path / "dist").iterdir())
    assert built == sorted([dist[0].name, dist[1].name])
    assert names(tmp_path / "dist" / dist[1].name) == names(dist[1])
    sh(make, "--no-print-directory", "wheelhouse", f"WHEELHOUSE={tmp_path / 'house'}", cwd=ROOT)
    house = {p.name.split("-")[0].lower() for p in (tmp_path / "house").glob("*.whl")}
    assert {"dealerbox", "rpi_gpio", "spidev", "mfrc522", "gpiozero", "transitions"} <= house
