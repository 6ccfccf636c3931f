"""Misconception: only the weights (plus scheduler and RNG) are saved; the
optimizer restarts with empty moment/momentum buffers and its initial lr."""
# misconception: no_optimizer_state

CHANGE = r'''
@@ -8,1 +8,0 @@ def save_checkpoint(path, model, optimizer, scheduler, epoch):
-        "optimizer": optimizer.state_dict(),
@@ -18,1 +17,0 @@ def load_checkpoint(path, model, optimizer, scheduler):
-    optimizer.load_state_dict(ckpt["optimizer"])
'''
