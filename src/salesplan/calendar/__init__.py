"""Calendar (contract §7 "calendar"): CalDAV connections, synced events, meeting artifacts."""
