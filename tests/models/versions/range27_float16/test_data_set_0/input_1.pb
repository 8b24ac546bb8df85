
BlJäc