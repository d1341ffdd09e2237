"""`python -m salesplan.cli`."""

from salesplan.cli import main

main()
