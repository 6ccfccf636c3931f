"""Misconception: linear_param_count always adds the bias, ignoring bias=False."""
# misconception: ignores_bias_flag

CHANGE = r'''
@@ -6,1 +6,1 @@ def linear_param_count(d_in, d_out, bias=True):
-    return d_in * d_out + (d_out if bias else 0)
+    return d_in * d_out + d_out
'''
