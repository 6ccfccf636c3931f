# misconception: fancy_view_and_reshape_copy
"""Has views and copies the wrong way round: believes fancy indexing returns a view and reshape a copy."""

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
+    return torch.tensor([[11.0, 1.0, 11.0], [10.0, 0.0, 10.0]])
'''
