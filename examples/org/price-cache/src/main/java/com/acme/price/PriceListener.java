package com.acme.price;

import org.apache.rocketmq.spring.annotation.MessageModel;
import org.apache.rocketmq.spring.annotation.RocketMQMessageListener;
import org.apache.rocketmq.spring.core.RocketMQListener;
import org.springframework.stereotype.Component;

/** Every replica keeps a full price cache: broadcasting, offsets on a persistent volume. */
@Component
@RocketMQMessageListener(consumerGroup = "GID_PRICE_CACHE", topic = "TOPIC_PRICE", messageModel = MessageModel.BROADCASTING)
public class PriceListener implements RocketMQListener<String> {
    @Override
    public void onMessage(String message) {
        System.out.println("price " + message);
    }
}
