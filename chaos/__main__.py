"""`python -m chaos --seed N`: see chaos/driver.py."""

from chaos.driver import main

raise SystemExit(main())
