"""Misconception: the scheduler is not saved, so after a resume it counts
its steps from zero again and the learning-rate schedule shifts."""
# misconception: no_scheduler_state

CHANGE = r'''
@@ -9,1 +9,0 @@ def save_checkpoint(path, model, optimizer, scheduler, epoch):
-        "scheduler": scheduler.state_dict(),
@@ -19,1 +18,0 @@ def load_checkpoint(path, model, optimizer, scheduler):
-    scheduler.load_state_dict(ckpt["scheduler"])
'''
