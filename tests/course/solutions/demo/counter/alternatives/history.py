class Counter:
    def __init__(self, start=0):
        self.steps = [start]

    @property
    def total(self):
        return sum(self.steps)

    def add(self, n):
        self.steps.append(n)
        return self.total
