# misconception: select_copies
"""Believes an integer index (x[0]) copies the row, so a += 1 would leave x unchanged."""

CHANGE = r'''
@@ -35,8 +35,1 @@ def exercise_result():
-    x = torch.zeros(2, 3)
-    a = x[0]
-    b = x[:, [0, 2]]
-    c = x.reshape(3, 2)
-    a += 1
-    b += 10
-    c[2, 1] = 5
-    return x
+    return torch.tensor([[0.0, 0.0, 0.0], [0.0, 0.0, 5.0]])
'''
