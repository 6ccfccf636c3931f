# misconception: reshape_copy
"""Believes reshape copies, so c[2, 1] = 5 would leave x unchanged."""

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
+    return torch.tensor([[1.0, 1.0, 1.0], [0.0, 0.0, 0.0]])
'''
