"""Plans: mutual success plans with milestones, goals and tasks."""
