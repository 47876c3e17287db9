print("listctl")
