"""`python -m bot.cli`: the same as the `parley` command."""

from bot.cli import main

raise SystemExit(main())
