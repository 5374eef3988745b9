"""An error's exit code follows from its place in the hierarchy: each family under `CustodianError`
(bad input 2, not found 2, corrupt 2, refused 1, problems found 1) says its code once, and no class
below a family overrides it — a class that needs another code belongs in another family."""

import importlib
import pkgutil

import pytest

import memory_custodian
from memory_custodian.base import errors


def _every_error_class() -> list[type]:
    # import every module, so an error class declared outside errors.py is held to the rule too
    for info in pkgutil.walk_packages(memory_custodian.__path__, "memory_custodian."):
        importlib.import_module(info.name)
    found, todo = [], [errors.CustodianError]
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(cls.__subclasses__())
    return found


@pytest.mark.parametrize("cls", _every_error_class(), ids=lambda cls: cls.__name__)
def test_exit_code_is_the_family_s(cls):
    if cls is errors.CustodianError:
        assert cls.exit_code == 2
        return
    base = cls.__mro__[1]
    if base is errors.CustodianError:
        return  # a family: it may say its own code
    assert "exit_code" not in vars(cls), f"{cls.__name__} overrides its family's exit code"
    assert cls.exit_code == base.exit_code


def test_the_families_codes():
    assert errors.InvalidInput.exit_code == errors.NotFound.exit_code == errors.Corrupt.exit_code == 2
    assert errors.Refused.exit_code == errors.ProblemsFound.exit_code == 1
    # a credential in the input is bad input, refused before anything is written
    assert issubclass(errors.SecretFound, errors.InvalidInput)
    assert errors.SecretFound.exit_code == 2
