"""Misconception: StraightThroughRound's forward rounds its input in place (x.round_()): the value is
right, but the caller's tensor comes back rounded (the contract: inputs are never modified)."""
# misconception: none

CHANGE = r'''
@@ -7,1 +7,1 @@ def forward(ctx, x):
-        return torch.round(x)
+        return x.round_()
'''
