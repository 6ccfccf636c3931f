class Counter:
    def __init__(self, start=0):
        self.total = start

    def add(self, n):
        self.total += n
        return self.total
