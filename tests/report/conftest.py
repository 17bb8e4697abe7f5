import pytest
from report_samples import SOURCE


@pytest.fixture
def source_file(tmp_path):
    """The CUDA file the sample findings point into."""
    path = tmp_path / "reduce.cu"
    path.write_text(SOURCE)
    return path
