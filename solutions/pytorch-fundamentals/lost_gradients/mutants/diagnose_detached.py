# misconception: diagnose_detached
"""Misconception: thinks .to(device) detaches the tensor and that argmax merely detaches the
graph (instead of being non-differentiable)."""

CHANGE = r'''
@@ -20,1 +20,1 @@ def diagnose():
-    return {1: "non_leaf", 2: "not_retained", 3: "not_differentiable"}
+    return {1: "detached", 2: "not_retained", 3: "detached"}
'''
