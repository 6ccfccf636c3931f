"""Ignores the starting value: every counter starts from 0."""
# misconception: none

CHANGE = r'''
@@ -3,1 +3,1 @@ def __init__(self, start=0):
-        self.total = start
+        self.total = 0
'''
