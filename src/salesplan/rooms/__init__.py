"""Buyer rooms (contract §16): a plan as its buyer sees it, shared, signed in to with a code,
ticked and commented on. The seller's API is `router.py`; the buyer's pages `web.py`."""
