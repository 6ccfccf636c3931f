"""Ignores the starting value: every counter starts from 0."""
# misconception: none


class Counter:
    def __init__(self, start=0):
        self.total = 0

    def add(self, n):
        self.total += n
        return self.total
