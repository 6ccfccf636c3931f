class Counter:
    def __init__(self, start=0):
        raise NotImplementedError

    def add(self, n):
        raise NotImplementedError
