"""Messages that send the user the right way: no option taken by its abbreviation, the closest
name to a mistyped option, command, choice, runtime or spec, exit codes and every opt-in runtime
in --help, every runtime package in --version, and an interrupt naming the command that continues
each command's work."""
import importlib.metadata
import shlex
import signal

import pytest

import padconf.cli.parser as parser_module
from padconf.adapters import OPT_IN, adapter_class, registry
from padconf.cli import Terminated, main
from padconf.cli.parser import build_parser

FAKE = "tests.fake_adapters:"


def one_line(capsys, code, expected_code=2):
    err = capsys.readouterr().err
    assert code == expected_code, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    return err


@pytest.mark.parametrize("argv, words", [
    (["run", "--runtim", "onnxruntime"], "unrecognized arguments: --runtim onnxruntime (did you mean '--runtime'?)"),
    (["run", "--max-exampels=3"], "(did you mean '--max-examples'?)"),
    (["gate", "--runtime", "x", "--baseline", "b", "--exampel-db", "d"], "(did you mean '--example-db'?)"),
    (["--spec-dir=d", "specs"], "(did you mean '--specs-dir'?)"),
    (["rnu"], "invalid choice: 'rnu' (did you mean 'run'?)"),
    # a typo that leaves a required option missing is named, not the option it hid
    (["gate", "--runtme", "onnxruntime"], "unrecognized arguments: --runtme (did you mean '--runtime'?)"),
    (["baseline", "--runtim=onnxruntime"], "unrecognized arguments: --runtim (did you mean '--runtime'?)"),
    (["run", "--profile", "thorogh"], "invalid choice: 'thorogh' (did you mean 'thorough'?)"),
])
def test_a_mistyped_option_command_or_choice_is_refused_naming_the_closest(tmp_path, capsys, argv, words):
    err = one_line(capsys, main([*argv, "--out", str(tmp_path / "r")] if argv[0] == "run" else argv))
    assert words in err
    assert not (tmp_path / "r").exists()


def test_no_parser_takes_an_option_by_its_abbreviation():
    parser = build_parser()
    assert not parser.allow_abbrev and parser.commands
    for name, sub in parser.commands.items():
        assert not sub.allow_abbrev, name


@pytest.mark.parametrize("argv, words", [
    (["run", "--runtime", "onnxruntim", "--max-examples", "0"], "unknown runtime 'onnxruntim' (did you mean "
                                                                "'onnxruntime'?)"),
    (["run", "--runtime", "openvino-onx", "--max-examples", "0"], "(did you mean 'openvino-onnx'?)"),
    (["check", "--spec", "onnx/Pad-91"], "unknown spec id 'onnx/Pad-91' (did you mean 'onnx/Pad-1'?)"),
    (["check", "--spec", "Pad-19"], "unknown spec id 'Pad-19' (did you mean 'onnx/Pad-19'?)"),
    # a version or a name alone, as a user who knows only that part writes it
    (["check", "--spec", "19"], "unknown spec id '19' (did you mean 'onnx/Pad-19'?)"),
    (["check", "--spec", "Pad-2"], "(did you mean 'onnx/Pad-2' or 'tf/Pad-2' or 'torch/Pad-2'?)"),
])
def test_a_mistyped_runtime_or_spec_id_is_refused_naming_the_closest(tmp_path, capsys, argv, words):
    err = one_line(capsys, main([*argv, "--out", str(tmp_path / "r")] if argv[0] == "run" else argv))
    assert words in err
    assert not (tmp_path / "r").exists()


def test_a_name_like_nothing_known_gets_no_guess(capsys):
    err = one_line(capsys, main(["check", "--spec", "zzzzzz"]))
    assert "did you mean" not in err


@pytest.mark.parametrize("argv", [["--help"], ["run", "--help"], ["gate", "--help"], ["minimize", "--help"]])
def test_help_gives_the_exit_codes(capsys, argv):
    assert main(argv) == 0
    out = capsys.readouterr().out
    codes = out[out.index("exit codes:"):]
    for code in ("0 ", "1 ", "2 ", "3 ", "130 "):
        assert f"\n  {code}" in codes, codes


def test_runs_help_counts_and_names_every_opt_in_runtime(capsys):
    assert main(["run", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert f"the {len(OPT_IN)} opt-in ones" in text
    for name in ("onnxoptimizer", "onnxscript", "onnxslim", "onnxsim", "onnx-version-converter", "torch-export",
                 "tract", "iree-cuda", "tvm-vulkan"):
        assert name in OPT_IN and f" {name}," in text.replace(f" {name})", f" {name},"), name


def test_version_names_every_runtime_package_padconf_can_run(capsys):
    assert main(["--version"]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and out.startswith("padconf ")
    # the packages each runtime imports: IREE's runtime is a distribution apart from its compiler (audit E)
    packages = {p for name in registry() for p in (adapter_class(name).package, *adapter_class(name).companions)}
    assert {"iree-base-compiler", "iree-base-runtime", "apache-tvm", "onnxruntime", "openvino", "tract",
            "onnx"} <= packages
    for package in packages | {"numpy"}:
        try:
            installed = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            assert f"{package} " not in out
            continue
        assert f"{package} {installed}" in out


COMMANDS = {  # a command line of each command that does work, and what its interrupt must say
    "run": (["run", "--out", "my run"], "what finished is kept (`padconf run --resume --out 'my run'` continues)"),
    "gate": (["gate", "--runtime", "onnxruntime", "--baseline", "my b.yaml"],
             "a gate starts over: `padconf gate --runtime onnxruntime --baseline 'my b.yaml'` runs it again"),
    "baseline": (["baseline", "--runtime", "onnxruntime"],
                 "a baseline starts over: `padconf baseline --runtime onnxruntime` runs it again"),
    "minimize": (["minimize", "case.json", "--runtime", "onnxruntime", "--out", "m"],
                 "the bundles finished are kept in m; minimize starts over, into a new or empty folder: "
                 "`padconf minimize case.json --runtime onnxruntime --out m-2` runs it again"),
    "generate": (["generate", "--out", "g"],
                 "g is as it was (generate replaces it whole): `padconf generate --out g` runs it again"),
    "report": (["report", "r", "--html", "r.html"], "nothing of it is kept: `padconf report r --html r.html` runs it "
                                                    "again"),
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("signal_raised, code, says", [(KeyboardInterrupt(), 130, "interrupted"),
                                                       (Terminated(15), 143, "SIGTERM"),
                                                       (Terminated(1), 129, "SIGHUP")])
def test_an_interrupt_names_the_command_that_continues_each_commands_work(monkeypatch, capsys, tmp_path, command,
                                                                          signal_raised, code, says):
    argv, continues = COMMANDS[command]
    monkeypatch.chdir(tmp_path)
    if command == "run":  # a run that has written its run.json (one stopped before wrote nothing to resume)
        (tmp_path / "my run").mkdir()
        (tmp_path / "my run" / "run.json").write_text("{}")

    def interrupted(args):
        raise signal_raised

    monkeypatch.setattr(parser_module, f"cmd_{command}", interrupted)  # the parser binds each command's function
    err = one_line(capsys, main(argv), code)
    assert err == f"padconf: {says}; {continues}\n"
    named = shlex.split(err.split("`")[1])[1:]  # the command it names is one padconf takes, as it was given
    assert build_parser().parse_args(named).command == command
    if command != "run":
        # only a run resumes (gate --resume is refused); minimize starts over into an empty folder
        again = [w if w != "m" else "m-2" for w in argv] if command == "minimize" else argv
        assert "--resume" not in err and named == again
    else:
        assert build_parser().parse_args(named).resume


@pytest.mark.slow
def test_runtimes_without_a_terminal_is_one_line_per_runtime(capsys):
    assert main(["runtimes"]) == 0  # capsys: stdout is no terminal
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(registry()) + 1 and lines[-1].startswith(f"{len(registry())} adapters registered")
    for name, line in zip(registry(), lines):
        assert line.startswith(f"{name} ") or line.startswith(f"{name}: unavailable here: "), line
        assert registry()[name] in line and (name not in OPT_IN or OPT_IN[name] in line), line


@pytest.mark.parametrize("signum, code, says", [(signal.SIGTERM, 143, "SIGTERM"), (signal.SIGINT, 130, "interrupted")])
def test_a_signal_whose_raise_a_callback_swallows_still_ends_the_command_with_its_line(monkeypatch, capsys, signum,
                                                                                     code, says):
    """SIGTERM on a gate as it closed its workers: the handler's raise came inside a __del__,
    padconf's unraisable hook raised it again in the main thread, whose handler ran inside the
    hook, where Python ignores it too ("Exception ignored in sys.unraisablehook"): the gate exited
    1, as if it had finished. The signal is kept, and the command ends as it says."""
    argv, continues = COMMANDS["gate"]

    class Closing:
        def __del__(self):
            raise Terminated(signum) if signum != signal.SIGINT else KeyboardInterrupt

    def gate(args):
        Closing()  # dropped at once: its __del__ raises, as a handler run there does
        return 1

    monkeypatch.setattr(parser_module, "cmd_gate", gate)
    assert main(argv) == code
    err = capsys.readouterr().err
    assert err == f"padconf: {says}; {continues}\n", err
