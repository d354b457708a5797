"""placeholder"""
def set_options(ctx): pass
