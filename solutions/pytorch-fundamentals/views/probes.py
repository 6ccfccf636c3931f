import torch


def _safe(fn, *args):
    try:
        return {"value": fn(*args)}
    except NotImplementedError:
        raise
    except Exception as e:
        return {"error": f"{type(e).__name__}: {e}"}


def shares_many(mod, pairs):
    return [_safe(mod.shares_storage, a, b) for a, b in pairs]


def flatten_many(mod, xs):
    out = []
    for x in xs:
        witness = x.as_strided(x.size(), x.stride(), x.storage_offset())
        r = _safe(mod.flatten_any, x)
        r["arg"] = x
        r["witness"] = witness
        out.append(r)
    return out
