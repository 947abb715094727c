"""Missing Java or a wrong Python must end in one readable sentence."""

from __future__ import annotations

import os
import stat

import pytest

from cdc_warehouse import prereqs


@pytest.mark.parametrize(
    ("output", "major"),
    [
        ('openjdk version "17.0.15" 2025-04-15', 17),
        ('java version "21" 2023-09-19', 21),
        ('java version "1.8.0_392"', 8),
        ("no version here", None),
    ],
)
def test_java_major_version_is_read_from_java_version_output(output, major):
    assert prereqs.parse_java_major(output) == major


def test_supported_python_versions():
    assert prereqs.python_problem((3, 11)) is None
    assert prereqs.python_problem((3, 13)) is None
    assert "3.10 found" in prereqs.python_problem((3, 10))
    assert "3.14 found" in prereqs.python_problem((3, 14))


def test_missing_java_is_reported_with_what_to_install(monkeypatch, tmp_path):
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    problem = prereqs.java_problem()
    assert problem is not None
    assert "Java was not found" in problem
    assert "openjdk-17" in problem


def test_old_java_is_reported(monkeypatch, tmp_path):
    fake_java = tmp_path / "bin" / "java"
    fake_java.parent.mkdir()
    fake_java.write_text("#!/bin/sh\necho 'java version \"1.8.0_392\"' >&2\n")
    fake_java.chmod(fake_java.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("JAVA_HOME", str(tmp_path))
    assert "Java 8" in prereqs.java_problem()


def test_a_java_that_does_not_start_is_reported_with_what_it_said(monkeypatch, tmp_path):
    fake_java = tmp_path / "bin" / "java"
    fake_java.parent.mkdir()
    fake_java.write_text(
        "#!/bin/sh\necho 'NOTE: Picked up JDK_JAVA_OPTIONS: -XX:-Bogus' >&2\n"
        "echo 'Error: Could not create the Java Virtual Machine.' >&2\nexit 1\n"
    )
    fake_java.chmod(fake_java.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("JAVA_HOME", str(tmp_path))
    problem = prereqs.java_problem()
    assert problem.startswith(f"Could not read the version of {fake_java}; Spark needs Java 17+.")
    assert problem.endswith(
        "said: NOTE: Picked up JDK_JAVA_OPTIONS: -XX:-Bogus / Error: Could not create the Java "
        "Virtual Machine."
    )


def test_main_prints_problems_and_fails(monkeypatch, tmp_path, capsys):
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert prereqs.main() == 1
    assert "cdcw: Java was not found" in capsys.readouterr().err


def test_this_machine_passes():
    if os.environ.get("JAVA_HOME") is None and prereqs.java_executable() is None:
        pytest.fail("the test machine itself has no Java")
    assert prereqs.problems() == []
