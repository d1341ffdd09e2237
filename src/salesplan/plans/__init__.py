"""Plans: mutual success plans with milestones, goals and tasks."""

# Registers the session events that keep each plan's version (getPlan's ETag) exact.
from salesplan.plans import versioning as versioning
