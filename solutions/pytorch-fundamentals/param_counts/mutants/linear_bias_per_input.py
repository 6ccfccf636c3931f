"""Misconception: nn.Linear is thought to hold one bias per input feature (d_in) instead of one per
output feature (d_out)."""
# misconception: bias_per_input

CHANGE = r'''
@@ -6,1 +6,1 @@ def linear_param_count(d_in, d_out, bias=True):
-    return d_in * d_out + (d_out if bias else 0)
+    return d_in * d_out + (d_in if bias else 0)
'''
