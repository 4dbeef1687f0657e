import sys

from auditor.cli.app import main

sys.exit(main())
