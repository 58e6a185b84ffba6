import archivist


def test_all_names_are_importable_and_sorted():
    for name in archivist.__all__:
        assert getattr(archivist, name) is not None, name
    assert list(archivist.__all__) == sorted(archivist.__all__)


def test_fixed_api_names_exist():
    mem_cls = archivist.Memory
    assert callable(mem_cls.open)
    for method in ("remember", "remember_many", "apply", "search", "render", "memory_search", "confirm"):
        assert callable(getattr(archivist.MemoryScope, method)), method
