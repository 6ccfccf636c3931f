"""Misconception: the checkpoint has weights, optimizer and scheduler but not
the random generator state, so dropout masks and shuffling differ after a
resume."""
# misconception: no_rng_state

CHANGE = r'''
@@ -10,2 +10,0 @@ def save_checkpoint(path, model, optimizer, scheduler, epoch):
-        "torch_rng": torch.get_rng_state(),
-        "cuda_rng": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else [],
@@ -20,3 +18,0 @@ def load_checkpoint(path, model, optimizer, scheduler):
-    torch.set_rng_state(ckpt["torch_rng"])
-    if ckpt["cuda_rng"] and torch.cuda.is_available():
-        torch.cuda.set_rng_state_all(ckpt["cuda_rng"])
'''
