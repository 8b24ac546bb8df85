"""onnxruntime.capi.onnxruntime_inference_collection: the session classes and the provider-argument
normalizer."""
import warnings
from collections.abc import Sequence

from ..session import InferenceSession, SessionOptions, RunOptions, OrtValue  # noqa: F401
from ..io_binding import IOBinding  # noqa: F401
from .._sparse import SparseTensor  # noqa: F401


def check_and_normalize_provider_args(providers, provider_options, available_provider_names):
    """(providers, provider_options) as two lists of equal length, options as {str: str}: providers
    are names or (name, options) pairs, provider_options an optional parallel list of dicts. A name
    given twice is dropped with a warning; anything malformed raises ValueError. Names outside
    available_provider_names are kept (the session reports them)."""
    if providers is None:
        return [], []
    if isinstance(providers, (str, bytes)) or not isinstance(providers, Sequence):
        raise ValueError("'providers' should be a sequence.")
    if provider_options is not None:
        if not isinstance(provider_options, Sequence) or isinstance(provider_options, (str, bytes)):
            raise ValueError("'provider_options' should be a sequence.")
        if len(providers) != len(provider_options):
            raise ValueError("'providers' and 'provider_options' should be the same length if both are given.")
        if not all(isinstance(p, str) for p in providers):
            raise ValueError("Only string values for 'providers' are supported if 'provider_options' is given.")
        if not all(isinstance(o, dict) for o in provider_options):
            raise ValueError("'provider_options' values must be dicts.")
        pairs = list(zip(providers, provider_options))
    else:
        pairs = []
        for p in providers:
            if isinstance(p, str):
                pairs.append((p, {}))
            elif isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], str) and isinstance(p[1], dict):
                pairs.append(p)
            else:
                raise ValueError("'providers' values must be either strings or (string, dict) tuples.")
    names, options = [], []
    for name, opts in pairs:
        if name in names:
            warnings.warn("Duplicate provider '%s' encountered, ignoring." % name)
            continue
        names.append(name)
        options.append({str(k): str(v) for k, v in opts.items()})
    return names, options
