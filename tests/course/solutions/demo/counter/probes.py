def count_to(student, n):
    c = student.Counter(1)
    for i in range(n):
        c.add(i)
    return c.total
