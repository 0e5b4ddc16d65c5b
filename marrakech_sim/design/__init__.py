"""Design search: from "is the game balanced?" to "what rule makes it balanced?".

tune    the seat compensation search (integer purses per seat) and its equivalence verdict
"""
