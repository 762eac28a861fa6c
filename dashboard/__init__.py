"""The Streamlit dashboard for pruner: pages in ``app_pages/``, pure helpers beside them."""
