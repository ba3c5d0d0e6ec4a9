"""What padconf's command line imports before it knows the command: not Hypothesis, which only
drawing cases needs (`padconf run --cases`, `report`, `gate` ... draw nothing)."""
import subprocess
import sys


def test_the_command_line_imports_no_hypothesis_before_drawing():
    done = subprocess.run([sys.executable, "-c", "import sys, padconf.cli; print('hypothesis' in sys.modules)"],
                          capture_output=True, text=True, check=True, cwd="/")
    assert done.stdout.strip() == "False"
