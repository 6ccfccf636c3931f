# misconception: rebinds_input
"""Copies, then rebinds the caller's tensor onto the copy with x.set_(...), so that "the result
shares storage with the input" holds after the call although the function returned a copy
(and the caller's x now lives elsewhere)."""

CHANGE = r'''
@@ -31,1 +31,3 @@ def flatten_any(x):
-    return x.reshape(-1)
+    flat = x.contiguous().view(-1).clone()
+    x.set_(flat.untyped_storage(), 0, x.shape, torch.empty(x.shape).stride())
+    return flat
'''
