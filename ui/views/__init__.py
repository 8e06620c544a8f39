"""One module per page: each page file is page config plus a call to its view's ``render()``."""
