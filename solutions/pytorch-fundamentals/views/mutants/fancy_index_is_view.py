# misconception: fancy_index_view
"""Believes fancy indexing (x[:, [0, 2]]) returns a view, so b += 10 would change x."""

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
+    return torch.tensor([[11.0, 1.0, 11.0], [10.0, 0.0, 5.0]])
'''
