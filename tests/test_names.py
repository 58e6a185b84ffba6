"""Names are checked once, in Identity (issue 19 #5): every entry point refuses a tenant,
user, agent or project that could be a path, and no file the product writes lands outside
its target directory."""

import subprocess
import sys

import pytest

from archivist import Memory
from archivist.errors import InvalidIdentity
from archivist.model import Identity

BAD = ["../../escaped", "a/b", "..", ".hidden", "a b", "a\\b", "", " ", "x" * 129, "a\u202eb", "a\x00b", "-rf"]
GOOD = ["alice", "support-bot", "user@example.com", "t1:acme", "用户甲", "María", "_import", "a..b"]


@pytest.mark.parametrize("name", BAD)
def test_a_name_that_could_be_a_path_is_refused(name):
    for fields in ((name, "alice", "a"), ("acme", name, "a"), ("acme", "alice", name)):
        with pytest.raises(InvalidIdentity):
            Identity(*fields)
    with pytest.raises(InvalidIdentity):
        Identity("acme", "alice", "a", project=name)


@pytest.mark.parametrize("name", GOOD)
def test_ordinary_names_of_any_script_are_fine(name):
    assert Identity(name, name, name, project=name).user == name


def test_the_cli_refuses_an_agent_name_that_escapes_the_export_directory(tmp_path):
    db = str(tmp_path / "m.db")
    proc = subprocess.run([sys.executable, "-m", "archivist.cli", "remember", "x is y", "--user", "alice",
                           "--agent", "../../escaped", "--db", db], capture_output=True, text=True)
    assert proc.returncode == 1 and "not a valid name" in proc.stderr and "Traceback" not in proc.stderr
    with Memory.open(db) as mem:
        mem.scope(user="alice", agent="coder").remember("The user deploys on Fridays.")
    out = tmp_path / "trav" / "out"
    proc = subprocess.run([sys.executable, "-m", "archivist.cli", "export", "--user", "alice", "--format", "markdown",
                           "--out", str(out), "--db", db], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    written = [p for p in tmp_path.rglob("*.md")]
    assert written and all(p.resolve().is_relative_to(out.resolve()) for p in written)
