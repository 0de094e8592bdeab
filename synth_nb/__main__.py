import sys

from synth_nb.cli.main import main

sys.exit(main())
