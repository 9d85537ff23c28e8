"""The soak's pieces the tests share with ``bench/soak.py``: process figures from ``/proc`` and the verdict."""
